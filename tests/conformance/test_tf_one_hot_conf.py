"""Conformance: ``tf.one_hot`` and ``keras.utils.to_categorical`` as TensorFlow 2.21 / Keras 3.

Each program runs on tapegrad and on real TensorFlow: results must agree in
dtype and values, errors in type and exact ``str(e)`` (TensorFlow's eager fast
path appends `` name: `` to kernel errors, its fallback for Python lists does
not).  Skipped without TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.tf as tg_tf
from tests.tf_style.tf_helpers import real_tf


@pytest.fixture(scope="module")
def rtf() -> Any:
    return real_tf()


_I = np.array([0, 1])

ERRORS: dict[str, Callable[[Any], Any]] = {
    "float_list": lambda tf: tf.one_hot([0.0, 1.0], 3),
    "float_list_2d": lambda tf: tf.one_hot([[1.0]], 3),
    "mixed_list": lambda tf: tf.one_hot([1, 2.0], 3),
    "complex_list": lambda tf: tf.one_hot([1j], 3),
    "float_scalar": lambda tf: tf.one_hot(1.0, 3),
    "float_tensor": lambda tf: tf.one_hot(tf.constant([0.0, 1.0]), 3),
    "float64_tensor": lambda tf: tf.one_hot(tf.constant([0, 1], tf.float64), 3),
    "half_tensor": lambda tf: tf.one_hot(tf.constant([0, 1], tf.float16), 3),
    "bool_tensor": lambda tf: tf.one_hot(tf.constant([True, False]), 3),
    "int16_tensor": lambda tf: tf.one_hot(tf.constant([0, 1], tf.int16), 3),
    "uint32_tensor": lambda tf: tf.one_hot(tf.constant([0, 1], tf.uint32), 3),
    "float_variable": lambda tf: tf.one_hot(tf.Variable([0.0, 1.0]), 3),
    "float_list_negative_depth": lambda tf: tf.one_hot([1.0], -1),
    "depth_negative_list": lambda tf: tf.one_hot([0, 1], -1),
    "depth_negative_tuple": lambda tf: tf.one_hot((0, 1), -3),
    "depth_negative_array": lambda tf: tf.one_hot(_I, -1),
    "depth_negative_scalar": lambda tf: tf.one_hot(1, -1),
    "depth_negative_tensor": lambda tf: tf.one_hot(tf.constant([0, 1]), -2),
    "depth_wraps": lambda tf: tf.one_hot(1, 2**31),
    "depth_np_int64_wraps": lambda tf: tf.one_hot(1, np.int64(2**31)),
    "depth_float": lambda tf: tf.one_hot([0, 1], 3.0),
    "depth_int64_tensor": lambda tf: tf.one_hot([0, 1], tf.constant(3, tf.int64)),
    "depth_float_tensor": lambda tf: tf.one_hot(1, tf.constant(3.0)),
    "depth_float_tensor_list": lambda tf: tf.one_hot([1], tf.constant(3.0)),
    "depth_vector": lambda tf: tf.one_hot([0, 1], [3]),
    "depth_vector_array": lambda tf: tf.one_hot(_I, np.array([[3]])),
    "depth_none": lambda tf: tf.one_hot([0], None),
    "on_vector": lambda tf: tf.one_hot([0, 1], 3, on_value=[1.0, 2.0]),
    "on_matrix_array": lambda tf: tf.one_hot(_I, 3, on_value=[[1.0]]),
    "off_vector": lambda tf: tf.one_hot([0], 3, off_value=[1.0, 2.0]),
    "axis_too_big": lambda tf: tf.one_hot([0, 1], 3, axis=5),
    "axis_negative": lambda tf: tf.one_hot([0, 1], 3, axis=-2),
    "axis_scalar_indices": lambda tf: tf.one_hot(1, 3, axis=1),
    "order_axis_first": lambda tf: tf.one_hot(_I, np.array([3]), axis=5),
    "order_depth_before_on": lambda tf: tf.one_hot(_I, np.array([3]), on_value=[1.0, 2.0]),
    "order_on_before_negative": lambda tf: tf.one_hot(_I, -2, on_value=[1.0, 2.0]),
    "on_off_dtypes": lambda tf: tf.one_hot([0, 1], 3, on_value=1.0, off_value=0),
    "on_off_tensor_dtypes": lambda tf: tf.one_hot([0], 3, on_value=1,
                                                  off_value=tf.constant(2.5)),
    "on_float_dtype_int": lambda tf: tf.one_hot([0, 1], 3, on_value=5.0, dtype=tf.int32),
    "on_float64_dtype_float32": lambda tf: tf.one_hot(
        [0], 3, on_value=tf.constant(5.0, tf.float64), dtype=tf.float32),
    "on_tensor_dtype_float64": lambda tf: tf.one_hot(
        [0], 3, on_value=tf.constant(2.5), off_value=1, dtype=tf.float64),
    "on_int_dtype_bool": lambda tf: tf.one_hot(1, 3, on_value=1, dtype=tf.bool),
    "on_bool_no_off": lambda tf: tf.one_hot(1, 3, on_value=True),
    "dtype_bool": lambda tf: tf.one_hot([0, 1], 3, dtype=tf.bool),
    "to_categorical_negative_classes": lambda tf: tf.keras.utils.to_categorical([0, 1], -1),
    "to_categorical_small": lambda tf: tf.keras.utils.to_categorical([0, 5], 3),
    "to_categorical_float_classes": lambda tf: tf.keras.utils.to_categorical([0, 1], 3.0),
    "to_categorical_tensor_negative": lambda tf: tf.keras.utils.to_categorical(
        tf.constant([0, 2]), -1),
    "to_categorical_tensor_none": lambda tf: tf.keras.utils.to_categorical(tf.constant([0, 2])),
}

VALUES: dict[str, Callable[[Any], Any]] = {
    "ints": lambda tf: tf.one_hot([0, 2, 5, -1], 3),
    "empty_list": lambda tf: tf.one_hot([], 3),
    "bool_list": lambda tf: tf.one_hot([[True], [False]], 2),
    "bool_scalar": lambda tf: tf.one_hot(True, 3),
    "float64_array": lambda tf: tf.one_hot(np.array([0.7, 1.9, -0.5]), 3),
    "float32_array": lambda tf: tf.one_hot(np.array([0.0, 1.0], np.float32), 3),
    "uint16_array": lambda tf: tf.one_hot(np.array([0, 40000], np.uint16), 3),
    "int8_tensor": lambda tf: tf.one_hot(tf.constant([0, 1], tf.int8), 3),
    "uint8_tensor": lambda tf: tf.one_hot(tf.constant([0, 2], tf.uint8), 3),
    "int64_tensor": lambda tf: tf.one_hot(tf.constant([0, 2], tf.int64), 4),
    "depth_tensor": lambda tf: tf.one_hot([0, 1], tf.constant(3)),
    "depth_variable": lambda tf: tf.one_hot(1, tf.Variable(3)),
    "depth_np_float": lambda tf: tf.one_hot(1, np.float32(3.7)),
    "depth_np_bool": lambda tf: tf.one_hot(1, np.bool_(True)),
    "depth_wraps_to_2": lambda tf: tf.one_hot(1, 2**32 + 2),
    "on_int": lambda tf: tf.one_hot([0, 1], 3, on_value=5),
    "on_int_dtype_float": lambda tf: tf.one_hot([0, 1], 3, on_value=5, off_value=0,
                                                dtype=tf.float32),
    "off_float64": lambda tf: tf.one_hot([0, 1], 3, off_value=np.float64(-1)),
    "on_bool": lambda tf: tf.one_hot([0], 3, on_value=True, off_value=False),
    "on_float_dtype_float64": lambda tf: tf.one_hot([0], 3, on_value=2.5, off_value=1,
                                                    dtype=tf.float64),
    "on_np_float32_dtype_float64": lambda tf: tf.one_hot(1, 3, on_value=np.float32(2),
                                                         dtype=tf.float64),
    "on_big_int": lambda tf: tf.one_hot([0], 3, on_value=2**40),
    "on_variable": lambda tf: tf.one_hot(1, 3, on_value=tf.Variable(2.0)),
    "dtype_int8": lambda tf: tf.one_hot([0, 1], 3, dtype=tf.int8),
    "dtype_string_name": lambda tf: tf.one_hot([0], 3, dtype="int32"),
    "dtype_complex64": lambda tf: tf.one_hot([0, 1], 3, dtype=tf.complex64),
    "axis_0": lambda tf: tf.one_hot([0, 1], 3, axis=0),
    "axis_0_scalar": lambda tf: tf.one_hot(1, 3, axis=0),
    "axis_tensor": lambda tf: tf.one_hot([0], 3, axis=tf.constant(0)),
    "axis_middle": lambda tf: tf.one_hot([[0, 1], [2, 0]], 3, axis=1),
    "to_categorical_tensor": lambda tf: tf.keras.utils.to_categorical(tf.constant([0, 2]), 3),
    "to_categorical_tensor_column": lambda tf: tf.keras.utils.to_categorical(
        tf.constant([[0], [2]]), 3),
    "to_categorical_tensor_float": lambda tf: tf.keras.utils.to_categorical(
        tf.constant([0.7, 2.0, 5.0]), 3),
}

ARRAYS: dict[str, Callable[[Any], Any]] = {
    "ints": lambda tc: tc([0, 2, 1]),
    "fractional_labels": lambda tc: tc([0.5, 2.0]),
    "zero_classes": lambda tc: tc([0, 1], 0),
    "negative_label": lambda tc: tc([-1, 1], 3),
    "column": lambda tc: tc([[0], [1]], 3),
    "matrix": lambda tc: tc([[0, 1], [1, 2]], 3),
    "bools": lambda tc: tc([True, False]),
    "empty": lambda tc: tc([], 3),
    "scalar": lambda tc: tc(1, 3),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_one_hot_errors_are_tensorflows(rtf: Any, name: str) -> None:
    import keras  # noqa: F401 - tf.keras is Keras 3 once keras is imported

    results = []
    for tf in (tg_tf, rtf):
        with pytest.raises(Exception) as info:  # noqa: B017 - the type is compared below
            ERRORS[name](tf)
        results.append((type(info.value).__name__, str(info.value)))
    assert results[0] == results[1]


def test_one_hot_float_indices_carry_a_hint(rtf: Any) -> None:
    with pytest.raises(tg_tf.errors.InvalidArgumentError) as info:
        tg_tf.one_hot([0.5], 3)
    assert any("tf.cast" in n for n in getattr(info.value, "__notes__", []))


@pytest.mark.parametrize("name", sorted(VALUES))
def test_one_hot_values_are_tensorflows(rtf: Any, name: str) -> None:
    import keras  # noqa: F401

    ours, theirs = VALUES[name](tg_tf), VALUES[name](rtf)
    assert ours.dtype.name == theirs.dtype.name
    assert ours.shape.as_list() == theirs.shape.as_list()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_to_categorical_arrays_are_keras(rtf: Any, name: str) -> None:
    keras = pytest.importorskip("keras")
    ours = ARRAYS[name](tg_tf.keras.utils.to_categorical)
    theirs = ARRAYS[name](keras.utils.to_categorical)
    assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
