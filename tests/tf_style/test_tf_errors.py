"""Item 6: TensorFlow's exception types and wording, each followed by one hint line."""

from __future__ import annotations

import warnings

import pytest

import tapegrad.tf as tf
from tests.tf_style.tf_programs import PROGRAMS

ERRORS = sorted(n for n in PROGRAMS if n.startswith("err_") or n in (
    "second_call_non_persistent", "jacobian_after_gradient", "unconnected_bad_value",
    "custom_gradient_missing_variables", "stop_recording_unused_tape", "target_none"))

# the exception class TensorFlow raises for each program (checked against TensorFlow
# itself by tests/conformance/test_tf_tape_conf.py)
EXPECTED = {
    "err_mixed_dtypes": tf.errors.InvalidArgumentError,
    "err_mixed_float_widths": tf.errors.InvalidArgumentError,
    "err_truediv_dtypes": TypeError,
    "err_int_plus_float": tf.errors.InvalidArgumentError,
    "err_int_pow_float": TypeError,
    "err_broadcast": tf.errors.InvalidArgumentError,
    "err_matmul_1d": tf.errors.InvalidArgumentError,
    "err_matmul_inner": tf.errors.InvalidArgumentError,
    "err_reshape": tf.errors.InvalidArgumentError,
    "err_sqrt_int": tf.errors.InvalidArgumentError,
    "err_gather_range": tf.errors.InvalidArgumentError,
    "err_concat": tf.errors.InvalidArgumentError,
    "err_reduce_axis": tf.errors.InvalidArgumentError,
    "err_variable_iadd": RuntimeError,
    "err_assign_shape": ValueError,
    "err_assign_dtype": ValueError,
    "err_constant_dtype": TypeError,
    "err_convert_dtype": ValueError,
    "err_watch_float": ValueError,
    "err_reenter": ValueError,
    "err_float_source": TypeError,
    "second_call_non_persistent": RuntimeError,
    "jacobian_after_gradient": RuntimeError,
    "unconnected_bad_value": ValueError,
    "custom_gradient_missing_variables": TypeError,
    "stop_recording_unused_tape": RuntimeError,
    "target_none": TypeError,
}


def test_every_error_program_has_an_expected_type() -> None:
    assert sorted(EXPECTED) == ERRORS


@pytest.mark.parametrize("name", ERRORS)
def test_error_type_and_one_hint_line(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as e:  # noqa: B017 - the type is checked below
            PROGRAMS[name](tf)
    assert type(e.value) is EXPECTED[name] or (
        isinstance(e.value, EXPECTED[name]) and type(e.value).__module__.startswith("tapegrad"))
    assert "[tapegrad hint]" not in str(e.value)
    hints = getattr(e.value, "__notes__", [])
    assert len(hints) == 1 and hints[0].startswith("[tapegrad hint] "), hints
    assert "\n" not in hints[0] and len(hints[0]) > len("[tapegrad hint] ") + 10


def test_invalid_argument_error_is_an_op_error_and_a_value_error() -> None:
    with pytest.raises(tf.errors.OpError) as e:
        tf.constant(1.0) + tf.constant(1, dtype=tf.int32)
    err = e.value
    assert isinstance(err, ValueError)
    assert err.error_code == 3 and err.op is None and err.node_def is None
    assert err.message == str(err)


def test_float_source_error_is_clearer_than_tensorflows() -> None:
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * x
    with pytest.raises(TypeError) as e:
        tape.gradient(y, [x, 1.0])
    assert "source 1 is a float (1.0)" in str(e.value)
    assert "tf.Variable" in str(e.value)
